# A layer's private headers under an explicit name, for its tests and
# fuzzers: in `dir`, "internal/<layer>/x.h" is src/<layer>/x.h (a symbolic
# link per layer). Add `dir` to a target's include path to see them.
function(iolab_internal_view dir)
  file(MAKE_DIRECTORY ${dir}/internal)
  foreach(layer IN LISTS ARGN)
    if(NOT EXISTS ${dir}/internal/${layer})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${layer} ${dir}/internal/${layer} SYMBOLIC)
    endif()
  endforeach()
endfunction()
