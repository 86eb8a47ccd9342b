#!/bin/sh
# Kernel specs for the code interpreter. Each kernel runs under an address-space limit of three quarters
# of the sandbox's memory, so a runaway allocation fails inside the kernel (MemoryError) instead of
# taking the whole sandbox down.
set -eu
DIR=/opt/sandpit/code-interpreter
KERNELS=/usr/local/share/jupyter/kernels
cat > "$DIR/limited" <<'SH'
#!/bin/sh
kib=$(awk '/^MemTotal:/ { print int($2 * 3 / 4) }' /proc/meminfo)
ulimit -v "$kib"
exec "$@"
SH
chmod 0755 "$DIR/limited"
spec() {
  mkdir -p "$KERNELS/$1"
  printf '{"argv": %s, "display_name": "%s", "language": "%s"}\n' "$2" "$3" "$4" > "$KERNELS/$1/kernel.json"
}
spec python3 "[\"$DIR/limited\", \"python3\", \"-m\", \"ipykernel_launcher\", \"-f\", \"{connection_file}\"]" "Python 3" python
spec sandpit-javascript "[\"python3\", \"$DIR/kernels.py\", \"javascript\", \"-f\", \"{connection_file}\"]" "JavaScript (Node.js)" javascript
spec sandpit-typescript "[\"python3\", \"$DIR/kernels.py\", \"typescript\", \"-f\", \"{connection_file}\"]" "TypeScript (Node.js)" typescript
# R reads its start from a file: given with -e, R writes it to a temporary file it deletes but keeps
# open, and gVisor cannot save a sandbox holding one (docs/drivers.md).
echo 'IRkernel::main()' > "$DIR/irkernel.R"
spec sandpit-r "[\"$DIR/limited\", \"R\", \"--slave\", \"--no-save\", \"--no-restore\", \"--file=$DIR/irkernel.R\", \"--args\", \"{connection_file}\"]" "R" R
spec sandpit-bash "[\"python3\", \"$DIR/kernels.py\", \"bash\", \"-f\", \"{connection_file}\"]" "Bash" bash
# charts.py adds E2B's results (a figure's chart data, a DataFrame's columns) and images.py shows a
# Pillow image saved to a file, as IPython extensions importable as sandpit_charts and sandpit_images:
# names of their own, so that a user's `import charts` is theirs.
site=$(python3 -c 'import site; print(site.getsitepackages()[0])')
mkdir -p "$site"
ln -sf "$DIR/charts.py" "$site/sandpit_charts.py"
ln -sf "$DIR/images.py" "$site/sandpit_images.py"
# IPython shows figures inline as PNG and has pandas, numpy and pyplot loaded, as E2B's template does.
# No SQLite history: IPython commits every run's input to it (a synced write, slow under gVisor), and
# In, Out and execution counts live in memory anyway.
mkdir -p /etc/ipython
cat > /etc/ipython/ipython_kernel_config.py <<'PY'
c.InlineBackend.figure_formats = {"png"}
c.InteractiveShellApp.extensions = ["sandpit_charts", "sandpit_images"]
c.InteractiveShellApp.exec_lines = ["import matplotlib.pyplot", "import numpy", "import pandas"]
c.HistoryManager.enabled = False
PY
