/* The static Swift runtime's command-line arguments, for biounlock's helper programs.
 *
 * libswiftCore.a's CommandLine.cpp.o defines the two functions below and, next to them, a global
 * object whose constructor finds the process's argv by reading /proc/self/maps (to locate the
 * stack) when the program starts: one open and seven reads in every helper, which the module
 * spawns in each transaction that waits for a finger. glibc hands (argc, argv, envp) to every
 * constructor of the program itself, so this file takes them there, and defines both functions
 * itself: the linker then never takes that object out of the archive (LinkageTests checks).
 * The signatures are the runtime's own (SWIFT_CC(swift), as stdlib/public/stubs/CommandLine.cpp
 * declares them); hidden. */
#include "helper_runtime.h"
#include <stddef.h>

static char *no_arguments[] = { NULL };
static char **saved_argv = no_arguments;
static int saved_argc = 0;

__attribute__((constructor))
static void biounlock_take_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argv != NULL && argc > 0) {
        saved_argv = argv;
        saved_argc = argc;
    }
}

__attribute__((swiftcall, visibility("hidden")))
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    *outArgLen = saved_argc;
    return saved_argv;
}

__attribute__((swiftcall, visibility("hidden")))
void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    saved_argv = argv;
    saved_argc = argc;
}
