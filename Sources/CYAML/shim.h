#ifndef SYNCR_CYAML_SHIM_H
#define SYNCR_CYAML_SHIM_H
#include <yaml.h>
#endif
