// A C target needs one source file; everything it offers is in include/CSwitchbackSystem.h.
#include "CSwitchbackSystem.h"
