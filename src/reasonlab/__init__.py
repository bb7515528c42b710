"""reasonlab: when does a transformer learn a reasoning solution, and when does it memorize?"""

from reasonlab.init import apply_init_rate

__version__ = "0.1.0"
__all__ = ["apply_init_rate", "__version__"]
