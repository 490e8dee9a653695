# The Vulkan backend (src/backends/vulkan): built when the Vulkan loader's
# development files (pkg-config "vulkan", Debian: libvulkan-dev) and the GLSL
# compiler glslc (Debian: glslc) are found. Its compute shaders are compiled
# to SPIR-V at build time and embedded in a generated C file, so nothing is
# read from disk at run time.
option(SLEAPC_WITH_VULKAN "Build the Vulkan backend when libvulkan and glslc are found" ON)

function(sleapc_vulkan_backend)
  set(dir ${PROJECT_SOURCE_DIR}/src/backends/vulkan)
  if(NOT SLEAPC_WITH_VULKAN)
    message(STATUS "sleapc: vulkan backend disabled (SLEAPC_WITH_VULKAN=OFF)")
    return()
  endif()
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(SLEAPC_VULKAN QUIET IMPORTED_TARGET vulkan)
  endif()
  find_program(SLEAPC_GLSLC glslc)
  if(NOT SLEAPC_VULKAN_FOUND OR NOT SLEAPC_GLSLC)
    message(STATUS "sleapc: vulkan backend skipped (needs pkg-config vulkan and glslc; "
                   "Debian: libvulkan-dev glslc)")
    return()
  endif()
  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/*.c)
  file(GLOB shaders CONFIGURE_DEPENDS ${dir}/shaders/*.comp)
  file(GLOB includes CONFIGURE_DEPENDS ${dir}/shaders/*.glsl)
  set(gen ${CMAKE_BINARY_DIR}/generated/vulkan)
  file(MAKE_DIRECTORY ${gen})
  set(spvs "")
  foreach(shader ${shaders})
    get_filename_component(name ${shader} NAME_WE)
    add_custom_command(OUTPUT ${gen}/${name}.spv
      COMMAND ${SLEAPC_GLSLC} --target-env=vulkan1.1 -O -o ${gen}/${name}.spv ${shader}
      DEPENDS ${shader} ${includes}
      COMMENT "glslc ${name}.comp" VERBATIM)
    list(APPEND spvs ${gen}/${name}.spv)
    # The fp16-storage variant (--precision fp16) of each shader written for
    # it (its stores go through to_store, common.glsl, or it reads
    # SLEAPC_FP16 itself).
    file(STRINGS ${shader} fp16_ready REGEX "to_store\\(|SLEAPC_FP16")
    if(fp16_ready)
      add_custom_command(OUTPUT ${gen}/${name}_f16.spv
        COMMAND ${SLEAPC_GLSLC} --target-env=vulkan1.1 -O -DSLEAPC_FP16=1
                -o ${gen}/${name}_f16.spv ${shader}
        DEPENDS ${shader} ${includes}
        COMMENT "glslc ${name}.comp (fp16)" VERBATIM)
      list(APPEND spvs ${gen}/${name}_f16.spv)
    endif()
    # Its fp16-arithmetic variant (devices with shaderFloat16), for the
    # convolutions written for it (prod16 or SLEAPC_FP16_MATH, common.glsl).
    file(STRINGS ${shader} fp16_math_ready REGEX "prod16\\(|SLEAPC_FP16_MATH")
    if(fp16_math_ready)
      add_custom_command(OUTPUT ${gen}/${name}_f16m.spv
        COMMAND ${SLEAPC_GLSLC} --target-env=vulkan1.1 -O -DSLEAPC_FP16=1 -DSLEAPC_FP16_MATH=1
                -o ${gen}/${name}_f16m.spv ${shader}
        DEPENDS ${shader} ${includes}
        COMMENT "glslc ${name}.comp (fp16 arithmetic)" VERBATIM)
      list(APPEND spvs ${gen}/${name}_f16m.spv)
    endif()
  endforeach()
  add_custom_command(OUTPUT ${gen}/vulkan_spirv.c
    COMMAND ${CMAKE_COMMAND} -DOUT=${gen}/vulkan_spirv.c "-DSPVS=${spvs}"
            -P ${PROJECT_SOURCE_DIR}/cmake/SleapcEmbedSpirv.cmake
    DEPENDS ${spvs} ${PROJECT_SOURCE_DIR}/cmake/SleapcEmbedSpirv.cmake
    COMMENT "embed SPIR-V" VERBATIM)
  message(STATUS "sleapc: vulkan backend enabled (vulkan ${SLEAPC_VULKAN_VERSION}, ${SLEAPC_GLSLC})")
  target_sources(sleapc_objects PRIVATE ${srcs} ${gen}/vulkan_spirv.c)
  target_link_libraries(sleapc_objects PUBLIC PkgConfig::SLEAPC_VULKAN)
  target_compile_definitions(sleapc_objects PRIVATE SLEAPC_HAVE_VULKAN=1)
  set(SLEAPC_HAVE_VULKAN ON PARENT_SCOPE)
endfunction()

sleapc_vulkan_backend()
