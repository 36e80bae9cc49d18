# SPDX-License-Identifier: GPL-3.0-or-later
# Installs hooks/pip/{wheelgate,wheelgate_pip} for WG_PYTHON (CMakeLists.txt sets the WG_*
# variables before this script runs). Runs at install time: CMAKE_INSTALL_PREFIX is the prefix
# in force (`cmake --install --prefix` included); file(INSTALL) adds DESTDIR itself.
# WG_PYTHON in the environment of `cmake --install` overrides the configured one, so that one
# build installs for several interpreters (a venv: WG_PYTHON=V/bin/python cmake --install
# build --prefix V).
if(DEFINED ENV{WG_PYTHON} AND NOT "$ENV{WG_PYTHON}" STREQUAL "")
  set(WG_PYTHON "$ENV{WG_PYTHON}")
endif()
if(WG_PYTHON_SITEDIR)
  if(IS_ABSOLUTE "${WG_PYTHON_SITEDIR}")
    set(site "${WG_PYTHON_SITEDIR}")
  else()
    set(site "${CMAKE_INSTALL_PREFIX}/${WG_PYTHON_SITEDIR}")
  endif()
else()
  execute_process(COMMAND "${WG_PYTHON}" "${WG_SOURCE_DIR}/scripts/python-sitedir.py"
                          "${CMAKE_INSTALL_PREFIX}"
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot ask ${WG_PYTHON} where its packages go: ${err}"
                        "(set -DWG_PYTHON=/path/to/python or -DWG_PYTHON_SITEDIR=DIR)")
  endif()
  string(REPLACE "\n" ";" out "${out}")
  list(GET out 0 site)
  list(GET out 1 imported)
  if(NOT imported STREQUAL "yes")
    message(STATUS "${WG_PYTHON} does not import from ${site}: add it to PYTHONPATH, or "
                   "install with the prefix of the Python that should import wheelgate")
  endif()
endif()
file(INSTALL DESTINATION "${site}" TYPE DIRECTORY
  FILES "${WG_SOURCE_DIR}/hooks/pip/wheelgate" "${WG_SOURCE_DIR}/hooks/pip/wheelgate_pip"
  PATTERN __pycache__ EXCLUDE)
set(rec "$ENV{DESTDIR}${site}/wheelgate/_installed.py")
file(WRITE "${rec}" "# written by cmake --install\nLIBRARY = '${CMAKE_INSTALL_PREFIX}/${WG_LIBRARY_REL}'\nCLI = '${CMAKE_INSTALL_PREFIX}/${WG_CLI_REL}'\n")
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${rec}")
