"""Every run compiles its kernels into a fresh JIT cache of its own, never the user's ~/.cache."""
import atexit
import os
import shutil
import tempfile

# Before tilegraph is imported: the JIT reads its environment once, on first use.
_jit_cache = tempfile.mkdtemp(prefix="tilegraph-pytest-jit-")
os.environ["TG_JIT_CACHE_DIR"] = _jit_cache
atexit.register(shutil.rmtree, _jit_cache, True)
