#include "app.h"

int main(int argc, char** argv) { return iolab::cli::main(argc, argv); }
