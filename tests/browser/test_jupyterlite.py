"""The JupyterLite site in Chromium: the example notebook runs in the Pyodide kernel (a Web
Worker) on the browser's WebGPU adapter, offline, and prints the numbers numpy expects (in
Firefox: test_firefox.py)."""

from example_notebook import check_example_notebook, lite_site, run_in_chromium


def test_example_notebook_runs_on_webgpu_in_the_kernel_worker():
    check_example_notebook(*run_in_chromium(lite_site()))
