// The system calls the companion needs that Swift's Glibc module does not bring in.
#ifndef CSWITCHBACK_SYSTEM_H
#define CSWITCHBACK_SYSTEM_H

#if defined(__linux__)
// getrandom(2): glibc 2.25 and later, musl 1.1.20 and later.
#include <sys/random.h>
#endif

#endif
