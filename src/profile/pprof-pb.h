/*
 * Inside pprof reading and writing (pprof-read.c, pprof-write.c): the
 * generated protobuf-c types under short names. Nothing outside
 * src/profile/ includes this.
 */
#ifndef RECCE_PPROF_PB_H
#define RECCE_PPROF_PB_H

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile; /* protobuf-c's names are long */
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

#endif
