# SLEAPC_SANITIZE=address,undefined (or thread): instrument everything built.
set(SLEAPC_SANITIZE "" CACHE STRING "Comma-separated sanitizers, e.g. address,undefined")
if(SLEAPC_SANITIZE)
  set(_flags -fsanitize=${SLEAPC_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${_flags})
  add_link_options(${_flags})
  # Long end-to-end tests shorten themselves under the sanitizers (~3x slower).
  add_compile_definitions(SLEAPC_SANITIZED=1)
  message(STATUS "sleapc: sanitizers enabled: ${SLEAPC_SANITIZE}")
endif()
