# The libraries the build needs, looked for all at once: whatever is missing is
# named in one message with the Debian and conda-forge packages that provide it
# (a pip install from source stops here first when headers are missing).
find_package(Threads REQUIRED)
find_package(PkgConfig)
set(_sleapc_missing "")
macro(sleapc_missing what debian conda)
  string(APPEND _sleapc_missing "\n  ${what}: Debian/Ubuntu ${debian}; conda-forge ${conda}")
  list(APPEND _sleapc_missing_debian ${debian})
  list(APPEND _sleapc_missing_conda ${conda})
endmacro()

if(NOT PKG_CONFIG_FOUND)
  sleapc_missing("pkg-config" pkg-config pkg-config)
else()
  pkg_check_modules(YAML QUIET IMPORTED_TARGET yaml-0.1)
  pkg_check_modules(CJSON QUIET IMPORTED_TARGET libcjson)
  # Video decoding (and PNG/JPEG images) through FFmpeg's libraries.
  pkg_check_modules(FFMPEG QUIET IMPORTED_TARGET libavformat libavcodec libswscale libavutil)
  # sleap-nn ONNX exports: protobuf-c reads the protobuf wire format.
  pkg_check_modules(PROTOBUFC QUIET IMPORTED_TARGET libprotobuf-c)
  if(NOT YAML_FOUND)
    sleapc_missing("libyaml (yaml-0.1)" libyaml-dev yaml)
  endif()
  if(NOT CJSON_FOUND)
    sleapc_missing("cJSON (libcjson)" libcjson-dev cjson)
  endif()
  if(NOT FFMPEG_FOUND)
    sleapc_missing("FFmpeg (libavformat, libavcodec, libswscale, libavutil)"
      "libavformat-dev libavcodec-dev libswscale-dev libavutil-dev" ffmpeg)
  endif()
  if(NOT PROTOBUFC_FOUND)
    sleapc_missing("protobuf-c (libprotobuf-c)" libprotobuf-c-dev protobuf-c)
  endif()
endif()
# .slp label files, analysis HDF5 and legacy SLEAP (Keras .h5) models.
find_package(HDF5 QUIET COMPONENTS C)
if(NOT HDF5_FOUND)
  sleapc_missing("HDF5 (C library)" libhdf5-dev hdf5)
endif()
# Checkpoint archives: zlib's CRC-32 checks every record on load.
find_package(ZLIB QUIET)
if(NOT ZLIB_FOUND)
  sleapc_missing("zlib" zlib1g-dev zlib)
endif()
# The C code for onnx.proto (libonnx-dev) is made by protoc-c
# (protobuf-c-compiler) into the build tree at build time.
find_file(SLEAPC_ONNX_PROTO onnx.proto PATH_SUFFIXES onnx)
if(NOT SLEAPC_ONNX_PROTO)
  sleapc_missing("onnx.proto (ONNX's protobuf schema; or give any copy of it with -DSLEAPC_ONNX_PROTO=PATH, e.g. the one in the onnx Python package)" libonnx-dev onnx)
endif()
find_program(SLEAPC_PROTOC_C protoc-c)
if(NOT SLEAPC_PROTOC_C)
  sleapc_missing("protoc-c (the protobuf-c compiler)" protobuf-c-compiler protobuf-c)
endif()
if(_sleapc_missing)
  list(REMOVE_DUPLICATES _sleapc_missing_conda)
  string(REPLACE ";" " " _deb "${_sleapc_missing_debian}")
  string(REPLACE ";" " " _conda "${_sleapc_missing_conda}")
  message(FATAL_ERROR "sleapc cannot be built: missing${_sleapc_missing}\n"
    "Install them, e.g.\n  sudo apt-get install ${_deb}\n"
    "or in a conda environment\n  conda install -c conda-forge ${_conda}\n"
    "(with conda, build inside the activated environment so that pkg-config finds them).")
endif()
