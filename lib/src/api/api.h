/*
 * api/: the public entry points that are not a layer's own: the context and the scanner
 * (context.c, with the shipped data of core/data.h) and the scan dispatch (scan.c: a path, an fd
 * or a buffer sniffed and handed to facts/). The accessors of the fact model are facts/'s
 * (getters.c). Everything below is visible here.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_API_H
#define WG_API_H

#include "store/store.h"

#endif

