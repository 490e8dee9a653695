# cmake -DOUT=file.c "-DSPVS=a.spv;b.spv" -P SleapcEmbedSpirv.cmake
# Writes every SPIR-V module as a uint32_t array named after its file
# (sleapc__vk_spv_<name>, with _words), declared in
# src/backends/vulkan/vulkan_shaders.h. SPIR-V words are little-endian in the
# file, as on every machine the backend targets.
set(text "/* Generated from the compute shaders by SleapcEmbedSpirv.cmake: do not edit. */\n")
string(APPEND text "#include \"backends/vulkan/vulkan_shaders.h\"\n\n")
foreach(spv ${SPVS})
  get_filename_component(name ${spv} NAME_WE)
  file(READ ${spv} hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR words "${n} / 8")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])"
         "0x\\4\\3\\2\\1u," body "${hex}")
  string(REGEX REPLACE "((0x[0-9a-f]+u,){8})" "\\1\n    " body "${body}")
  string(APPEND text "const uint32_t sleapc__vk_spv_${name}[] = {\n    ${body}\n};\n")
  string(APPEND text "const size_t sleapc__vk_spv_${name}_words = ${words};\n\n")
endforeach()
file(WRITE ${OUT}.tmp "${text}")
file(RENAME ${OUT}.tmp ${OUT})
