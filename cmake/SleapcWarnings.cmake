# Warnings are errors: -Wall -Wextra -Werror plus the prototypes and shadowing
# checks that catch a forgotten `static` or a reused name.
function(sleapc_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wno-unused-parameter)
endfunction()
