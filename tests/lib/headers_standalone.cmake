# Every public header compiles on its own, first in its translation unit, as
# strict C11 and as C++11, with warnings as errors.
#   cmake -DCC=cc -DCXX=c++ -DINCLUDE_DIR=include -DWORK_DIR=dir -P headers_standalone.cmake
cmake_minimum_required(VERSION 3.18)
file(GLOB headers ${INCLUDE_DIR}/sleapc/*.h)
file(MAKE_DIRECTORY ${WORK_DIR})
set(failed FALSE)
set(n 0)

function(check_one header lang compiler source)
  execute_process(COMMAND ${compiler} ${ARGN} -pedantic-errors -Wall -Wextra -Werror
    -I${INCLUDE_DIR} -fsyntax-only ${source}
    RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE err)
  math(EXPR count "${n} + 1")
  set(n ${count} PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "sleapc/${header}.h does not compile alone as ${lang}:\n${err}")
    set(failed TRUE PARENT_SCOPE)
  endif()
endfunction()

foreach(h ${headers})
  get_filename_component(name ${h} NAME_WE)
  file(WRITE ${WORK_DIR}/${name}.c "#include \"sleapc/${name}.h\"\nint main(void) { return 0; }\n")
  check_one(${name} C11 ${CC} ${WORK_DIR}/${name}.c -std=c11 -Wstrict-prototypes)
  if(CXX)
    file(WRITE ${WORK_DIR}/${name}.cpp "#include \"sleapc/${name}.h\"\nint main() { return 0; }\n")
    check_one(${name} C++11 ${CXX} ${WORK_DIR}/${name}.cpp -std=c++11)
  endif()
endforeach()
if(NOT CXX)
  message(STATUS "no C++ compiler found: the headers were checked as C11 only")
endif()
if(NOT failed)
  message(STATUS "${n} compilations of the public headers, all clean")
endif()
