# `cmake --install build --prefix PREFIX` (or `make install PREFIX=...`):
# the CLI, libsleapc.so and libsleapc.a, the public headers, a pkg-config file
# (sleapc.pc) and a CMake package (find_package(sleapc) -> sleapc::sleapc, the
# shared library).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Relocatable: the CLI finds libraries beside it in ../lib wherever the prefix
# is unpacked (make dist); programs built with pkg-config get the prefix's
# libdir as their rpath from sleapc.pc.
file(RELATIVE_PATH _sleapc_bin_to_lib /prefix/${CMAKE_INSTALL_BINDIR} /prefix/${CMAKE_INSTALL_LIBDIR})
set_target_properties(sleapc_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${_sleapc_bin_to_lib}")
install(TARGETS sleapc_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS sleapc_shared EXPORT sleapcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS sleapc ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
# tools.h is for this tree's own programs (see its first lines): not installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sleapc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "tools.h" EXCLUDE)

# pkg-config: the shared library by default; `pkg-config --static` adds what
# libsleapc.a needs, each library it calls directly as a plain -l (linked as
# the user's toolchain links it, shared by default). Requires.private would
# instead pull in the static closure of FFmpeg, which needs the -dev packages
# of every codec library Debian builds FFmpeg with: that line would not link.
# HDF5 has no .pc file on every distribution: its libraries are listed as they
# were found.
set(SLEAPC_PC_REQUIRES_PRIVATE "")
set(SLEAPC_PC_LIBS_PRIVATE "")
foreach(_mod YAML CJSON FFMPEG PROTOBUFC AVDEVICE SLEAPC_VULKAN)
  if(${_mod}_FOUND)
    foreach(_dir ${${_mod}_LIBRARY_DIRS})
      if(NOT _dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
        string(APPEND SLEAPC_PC_LIBS_PRIVATE " -L${_dir}")
      endif()
    endforeach()
    foreach(_lib ${${_mod}_LIBRARIES})
      string(APPEND SLEAPC_PC_LIBS_PRIVATE " -l${_lib}")
    endforeach()
  endif()
endforeach()
get_target_property(_sleapc_deps sleapc_objects INTERFACE_LINK_LIBRARIES)
list(REMOVE_DUPLICATES _sleapc_deps)
foreach(_dep ${_sleapc_deps})
  if(_dep MATCHES "^PkgConfig::|^Threads::")
    continue()
  elseif(TARGET ${_dep})
    # An imported target (ZLIB::ZLIB): its file, as pkg-config cannot read target names.
    get_target_property(_loc ${_dep} IMPORTED_LOCATION)
    if(NOT _loc)
      get_target_property(_loc ${_dep} IMPORTED_LOCATION_RELEASE)
    endif()
    if(_loc MATCHES "^/.*/lib([^/]+)\\.(so|a)")
      string(APPEND SLEAPC_PC_LIBS_PRIVATE " -l${CMAKE_MATCH_1}")
    endif()
    continue()
  elseif(_dep STREQUAL "m")
    string(APPEND SLEAPC_PC_LIBS_PRIVATE " -lm")
  elseif(_dep MATCHES "^/.*/lib([^/]+)\\.(so|a)$")
    set(_lib ${CMAKE_MATCH_1})
    get_filename_component(_dir ${_dep} DIRECTORY)
    if(NOT _dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
      string(APPEND SLEAPC_PC_LIBS_PRIVATE " -L${_dir}")
    endif()
    string(APPEND SLEAPC_PC_LIBS_PRIVATE " -l${_lib}")
  elseif(NOT _dep MATCHES "^\\$<")
    string(APPEND SLEAPC_PC_LIBS_PRIVATE " ${_dep}")
  endif()
endforeach()
string(APPEND SLEAPC_PC_LIBS_PRIVATE " -pthread")
file(RELATIVE_PATH SLEAPC_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" SLEAPC_PC_UP "${SLEAPC_PC_UP}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/sleapc.pc.in ${PROJECT_BINARY_DIR}/sleapc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sleapc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(SLEAPC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sleapc)
install(EXPORT sleapcTargets NAMESPACE sleapc:: DESTINATION ${SLEAPC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sleapcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sleapcConfig.cmake INSTALL_DESTINATION ${SLEAPC_CMAKE_DIR})
# 0.x: a minor release may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sleapcConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sleapcConfig.cmake
  ${PROJECT_BINARY_DIR}/sleapcConfigVersion.cmake DESTINATION ${SLEAPC_CMAKE_DIR})

# The Python package, where the prefix's python3 looks for it: Debian's
# dist-packages under /usr/local and /usr, site-packages under any other prefix
# (~/.local is Python's user site; others go on PYTHONPATH). It finds
# libsleapc.so relative to itself, so the prefix may move (make dist).
if(EXISTS /usr/bin/python3)
  set(_install_python /usr/bin/python3)
else()
  find_program(_install_python NAMES python3)
endif()
if(_install_python)
  execute_process(COMMAND ${_install_python} -c
    "import sys; print('python%d.%d' % sys.version_info[:2])"
    OUTPUT_VARIABLE _pyver OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(SLEAPC_PYTHON_DIR "" CACHE STRING
    "Where `make install` puts the Python package, under the prefix (empty: by prefix)")
  set(_soname libsleapc.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  install(CODE "
set(_pydir \"${SLEAPC_PYTHON_DIR}\")
if(NOT _pydir)
  if(CMAKE_INSTALL_PREFIX STREQUAL /usr/local OR CMAKE_INSTALL_PREFIX STREQUAL /usr)
    set(_pydir lib/${_pyver}/dist-packages)
  else()
    set(_pydir lib/${_pyver}/site-packages)
  endif()
endif()
set(_pkg \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/\${_pydir}/sleapc\")
file(INSTALL DESTINATION \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/\${_pydir}\" TYPE DIRECTORY FILES \"${PROJECT_SOURCE_DIR}/python/sleapc\"
  FILES_MATCHING PATTERN \"*.py\" PATTERN \"__pycache__\" EXCLUDE)
file(RELATIVE_PATH _rel \"\${CMAKE_INSTALL_PREFIX}/\${_pydir}/sleapc\"
  \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/${_soname}\")
file(WRITE \"\${_pkg}/_install_path.py\"
  \"import os\\nLIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), \\\"\${_rel}\\\")\\n\")
")
endif()
