"""reasonlab: when does a transformer learn a reasoning solution, and when does it memorize?"""

from reasonlab.init import apply_init_rate
from reasonlab.registry import register_study, register_task

__version__ = "0.1.0"
__all__ = ["apply_init_rate", "register_study", "register_task", "__version__"]
