#include <stdio.h>

#include "sleapc/sleapc.h"

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("sleapc %s\n", sleapc_version());
    return 0;
}
