# The presets (presets/*.json) compiled into the library as string literals:
# writes BINARY_DIR/generated/presets_data.cc from src/inputs/presets_data.cc.in.
# Included by the library's build and by the web page's (web/CMakeLists.txt).
function(trainflops_generate_presets_data source_dir binary_dir)
  file(GLOB preset_files CONFIGURE_DEPENDS ${source_dir}/presets/*.json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${preset_files})
  list(LENGTH preset_files preset_count)
  set(preset_literals "")
  foreach(preset_file IN LISTS preset_files)
    file(READ ${preset_file} preset_text)
    string(APPEND preset_literals "    R\"preset(${preset_text})preset\",\n")
  endforeach()
  configure_file(${source_dir}/src/inputs/presets_data.cc.in ${binary_dir}/generated/presets_data.cc @ONLY)
endfunction()
