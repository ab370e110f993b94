/* recce's version, printed by `recce --version` and written into profiles. */
#ifndef RECCE_VERSION_H
#define RECCE_VERSION_H
#define RECCE_VERSION "0.1.0"
#endif
