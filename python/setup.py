"""Builds trainflops._core and the command line with CMake (the repository's
CMakeLists.txt, targets trainflops_python and trainflops) for the
interpreter running pip, in ../build-pip, and installs them with the package
in trainflops/ (the command line as trainflops/bin/trainflops, which the
`trainflops` console script runs). Metadata is in pyproject.toml.
Everything the build writes stays in ../build-pip (ignored by git).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build-pip"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release",
                        f"-DTRAINFLOPS_PYTHON_EXECUTABLE={sys.executable}"], check=True)
        subprocess.run(["cmake", "--build", str(BUILD), "--target", "trainflops_python", "trainflops",
                        "-j", str(os.cpu_count() or 1)], check=True)
        built = next((BUILD / "python" / "trainflops").glob("_core*"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
        # The command line, run by `python -m trainflops` and the `trainflops` console script.
        cli = target.parent / "bin" / "trainflops"
        cli.parent.mkdir(exist_ok=True)
        shutil.copy2(BUILD / "trainflops", cli)


(BUILD / "setuptools").mkdir(parents=True, exist_ok=True)
setup(ext_modules=[Extension("trainflops._core", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": str(BUILD / "setuptools")}, "egg_info": {"egg_base": str(BUILD / "setuptools")}})
