#include "CSystem.h"

/* `make` passes -Xcc -DSYNCR_COMMIT="<git commit>"; a plain `swift build`, or a tree with no git
   metadata, gets NULL and syncr says "unknown". A C macro rather than a generated Swift file, so
   that nothing in the source tree has to be written before a build. */
const char *syncr_build_commit(void) {
#ifdef SYNCR_COMMIT
    return SYNCR_COMMIT;
#else
    return 0;
#endif
}
