# The commit the build was configured from, for `iolab --version` and the
# results' environment block: "unknown" outside a git checkout of iolab (a
# source tarball, or a tarball unpacked inside some other repository).
# Uncommitted changes are not recorded.
set(IOLAB_GIT_COMMIT unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --show-toplevel
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${PROJECT_SOURCE_DIR}" src)
  endif()
  if(rc EQUAL 0 AND top STREQUAL src)
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} RESULT_VARIABLE rc
                    OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0)
      set(IOLAB_GIT_COMMIT ${commit})
    endif()
    # Configure again when HEAD moves (a commit, a checkout), so a build
    # never reports a commit it was not built from: HEAD, and the branch
    # file it names (in a worktree, the two live in different git dirs).
    set(watch HEAD)
    execute_process(COMMAND ${GIT_EXECUTABLE} symbolic-ref -q HEAD
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} RESULT_VARIABLE rc
                    OUTPUT_VARIABLE ref OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0)
      list(APPEND watch ${ref})
    endif()
    foreach(name IN LISTS watch)
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --git-path ${name}
                      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                      OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      get_filename_component(path "${path}" ABSOLUTE BASE_DIR ${PROJECT_SOURCE_DIR})
      if(EXISTS "${path}")
        set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
      endif()
    endforeach()
  endif()
endif()
message(STATUS "iolab ${PROJECT_VERSION}, commit ${IOLAB_GIT_COMMIT}")
# Its own small source, outside the unity batches: a new commit recompiles
# this one file, not a batch of the base layer.
configure_file(${CMAKE_CURRENT_LIST_DIR}/git_commit.cpp.in ${CMAKE_BINARY_DIR}/generated/git_commit.cpp @ONLY)
