"""``python -m neuralop_fem.gpu_campaign STAGE --out DIR [--from DIR] [--rehearse]``."""

import sys

from neuralop_fem.gpu_campaign.runner import main

if __name__ == "__main__":
    sys.exit(main(program=("-m", "neuralop_fem.gpu_campaign")))
