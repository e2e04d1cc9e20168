// Declarations only: LLVMFuzzerRunDriver comes from the fuzzer runtime (-sanitize=fuzzer).
#include "CFuzzer.h"
