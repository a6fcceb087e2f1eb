/* knead — the umbrella header: robots from URDF, multibody dynamics, contact, controllers and
 * the simulation world. Install prefix: #include <knead/knead.h>. */
#ifndef KNEAD_H
#define KNEAD_H
#include "common/common.h"
#include "multibody/multibody.h"
#include "contact/contact.h"
#include "sap/sap.h"
#include "urdf/urdf.h"
#include "controllers/controllers.h"
#include "sim/sim.h"
#endif
