# What `cmake --install` puts where (docs/install.md), and the Debian package
# `make deb` builds from it with CPack.
include(GNUInstallDirs)
# Debian's zsh reads packages' completions from /usr/share/zsh/vendor-completions.
set(IOLAB_ZSH_COMPLETION_DIR ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions CACHE STRING
    "Where the zsh completion (_iolab) is installed, relative to the prefix")

install(TARGETS iolab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET iolab-mpi)
  install(TARGETS iolab-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
set(manual_dir ${CMAKE_BINARY_DIR}/manual)  # written by iolab-docgen (src/cli/CMakeLists.txt)
install(DIRECTORY ${manual_dir}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR})
install(FILES ${manual_dir}/bash-completion/iolab DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${manual_dir}/zsh/_iolab DESTINATION ${IOLAB_ZSH_COMPLETION_DIR})
# README.md next to docs/, so that its relative links still work.
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME iolab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "measure how the ways of doing file I/O perform on this machine")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "iolab measures streams, syscalls, pread/pwrite, vectored I/O, mmap, O_DIRECT, io_uring, libaio,\n"
       "copies and fsync policies on one filesystem, like for like, explains the differences and\n"
       "recommends a method. It reads fio job files, writes results as JSON and CSV, and an HTML report.")
set(CPACK_PACKAGE_CONTACT "iolab maintainers <iolab@example.org>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# iolab_<version>_amd64.deb
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# Depends: from the shared libraries the programs link (dpkg-shlibdeps): liburing2,
# libfmt9, libxxhash0, liblmdb0, libsqlite3-0, libaio1, libtomlplusplus3, libopenmpi3,
# libstdc++6, libc6. CLI11 and nlohmann-json are header-only; the report's chart
# bundles are compiled into iolab.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# mpirun, to start iolab-mpi; fio for `iolab crosscheck`, fio-examples for job files to try.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "fio, fio-examples")
include(CPack)
