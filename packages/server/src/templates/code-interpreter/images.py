"""Pillow images saved to a file are also shown as the run's result, as on E2B, for the IPython kernel.

Code written for a notebook often ends with `image.save("out.png")` and nothing else: without this, the
caller would have to fetch the file to see the image. An IPython extension, linked onto Python's path
as `sandpit_images` by install-kernels.sh and named in the kernel's config.
"""
import functools
import os


def load_ipython_extension(ip):
    try:
        from PIL import Image
    except ImportError:
        return
    save = Image.Image.save
    if getattr(save, "_sandpit_shows", False):
        return

    @functools.wraps(save)
    def save_and_show(self, fp, *args, **kwargs):
        result = save(self, fp, *args, **kwargs)
        # A path, not a stream: the PNG that display makes is itself written to a stream, through here.
        if isinstance(fp, (str, os.PathLike)):
            from IPython.display import display

            display(self)
        return result

    save_and_show._sandpit_shows = True
    Image.Image.save = save_and_show
