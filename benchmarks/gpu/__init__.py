"""What runs on a borrowed GPU machine: the campaign (:mod:`benchmarks.gpu.campaign`), the
data-path check (``python -m benchmarks.gpu.data_path``) and the download of the wheels that
the machine's image lacks (``fetch_wheels.sh``)."""
