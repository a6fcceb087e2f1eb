/* knead — the umbrella header: robots from URDF, multibody dynamics, contact and SAP,
 * FEM and MPM deformables, controllers and the simulation world. Install prefix: #include <knead/knead.h>. */
#ifndef KNEAD_H
#define KNEAD_H
#include "common/common.h"
#include "multibody/multibody.h"
#include "contact/contact.h"
#include "sap/sap.h"
#include "deformable/deformable.h"
#include "mpm/mpm.h"
#include "urdf/urdf.h"
#include "controllers/controllers.h"
#include "coupling/coupling.h"
#include "sim/sim.h"
#endif
