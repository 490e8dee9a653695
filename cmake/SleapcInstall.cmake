# `cmake --install build --prefix PREFIX` (or `make install PREFIX=...`):
# the CLI, libsleapc.so and libsleapc.a, the public headers, a pkg-config file
# (sleapc.pc) and a CMake package (find_package(sleapc) -> sleapc::sleapc, the
# shared library).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS sleapc_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS sleapc_shared EXPORT sleapcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS sleapc ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# tools.h is for this tree's own programs (see its first lines): not installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sleapc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "tools.h" EXCLUDE)

# pkg-config: the shared library by default; `pkg-config --static` adds what
# libsleapc.a needs. HDF5 has no .pc file on every distribution: its libraries
# are listed as they were found.
set(SLEAPC_PC_REQUIRES_PRIVATE "yaml-0.1 libcjson libavformat libavcodec libswscale libavutil libprotobuf-c")
if(AVDEVICE_FOUND)
  string(APPEND SLEAPC_PC_REQUIRES_PRIVATE " libavdevice")
endif()
if(SLEAPC_HAVE_VULKAN)
  string(APPEND SLEAPC_PC_REQUIRES_PRIVATE " vulkan")
endif()
set(SLEAPC_PC_LIBS_PRIVATE "")
get_target_property(_sleapc_deps sleapc_objects INTERFACE_LINK_LIBRARIES)
list(REMOVE_DUPLICATES _sleapc_deps)
foreach(_dep ${_sleapc_deps})
  if(_dep MATCHES "^PkgConfig::|^Threads::")
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

# The Python package, where Debian's python3 looks for packages under the
# prefix (PREFIX/lib/python3.X/dist-packages), told where libsleapc.so lies.
if(EXISTS /usr/bin/python3)
  set(_install_python /usr/bin/python3)
else()
  find_program(_install_python NAMES python3)
endif()
if(_install_python)
  execute_process(COMMAND ${_install_python} -c
    "import sys; print('python%d.%d' % sys.version_info[:2])"
    OUTPUT_VARIABLE _pyver OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(SLEAPC_PYTHON_INSTALL_DIR lib/${_pyver}/dist-packages CACHE STRING
    "Where `make install` puts the Python package, under the prefix")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/sleapc
    DESTINATION ${SLEAPC_PYTHON_INSTALL_DIR} FILES_MATCHING PATTERN "*.py"
    PATTERN "__pycache__" EXCLUDE)
  set(_soname libsleapc.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  install(CODE "file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${SLEAPC_PYTHON_INSTALL_DIR}/sleapc/_install_path.py\"
  \"LIBRARY = \\\"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/${_soname}\\\"\\n\")")
endif()
