# Warnings are errors: -Wall -Wextra -Werror plus the prototypes and shadowing
# checks that catch a forgotten `static` or a reused name. snprintf truncation
# is how messages and names are bounded on purpose, so that heuristic is off.
function(sleapc_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wno-unused-parameter -Wno-format-truncation)
endfunction()
