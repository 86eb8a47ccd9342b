/** A pull that failed; `detail` is what follows `image_pull_failed: ` in the build's error. */
export class ImagePullError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'ImagePullError';
  }
}
