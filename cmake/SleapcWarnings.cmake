# Warnings are errors: -Wall -Wextra -Werror plus the prototypes and shadowing
# checks that catch a forgotten `static` or a reused name. No variable-length
# arrays: an array sized by the data belongs on the heap, where a crowded
# frame cannot overflow the stack and the fail-after-N tests reach it.
# snprintf truncation is how messages and names are bounded on purpose, so
# that heuristic is off.
function(sleapc_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
    -Wno-unused-parameter -Wno-format-truncation)
endfunction()
