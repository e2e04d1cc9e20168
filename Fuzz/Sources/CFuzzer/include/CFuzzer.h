// libFuzzer's driver, for targets that bring their own `main` (SwiftPM renames an executable's
// `main`, so libFuzzer's own cannot be used).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
