/*
 * api/: the public entry points that are not a layer's own: the context and the scanner
 * (context.c, with the shipped data of core/data.h) and the accessors of the fact model
 * (getters.c). Everything below is visible here.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef WG_API_H
#define WG_API_H

#include "output/output.h"



#endif
