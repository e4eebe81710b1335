# The lit suite of the TX8 compiler (docs/compiler.md): tilegraph-opt runs on each .mlir file as its
# RUN lines say and FileCheck checks the output. Configured by CMake through lit.site.cfg.py.
import os

import lit.formats

config.name = "tilegraph"
config.test_format = lit.formats.ShTest(not lit_config.isWindows)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tilegraph_obj_root, "tests", "lit")

# Our tools first, then LLVM's (FileCheck, not); nothing else from the environment.
config.environment["PATH"] = os.pathsep.join(
    [config.tilegraph_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%tilegraph_src", config.tilegraph_src_root))
