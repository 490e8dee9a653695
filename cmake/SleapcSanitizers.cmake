# SLEAPC_SANITIZE=address,undefined (or thread): instrument everything built.
set(SLEAPC_SANITIZE "" CACHE STRING "Comma-separated sanitizers, e.g. address,undefined")
if(SLEAPC_SANITIZE)
  set(_flags -fsanitize=${SLEAPC_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${_flags})
  add_link_options(${_flags})
  message(STATUS "sleapc: sanitizers enabled: ${SLEAPC_SANITIZE}")
endif()
