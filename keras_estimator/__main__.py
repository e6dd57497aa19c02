"""`python -m keras_estimator ...`"""

import sys

from keras_estimator.cli import main

sys.exit(main())
