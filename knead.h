/* knead — the umbrella header: robots from URDF, multibody dynamics, contact and SAP,
 * FEM and MPM deformables, controllers, scenes, the simulation world,
 * its outputs and checks. Install prefix: #include <knead/knead.h>. */
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
#include "nonlinear/nonlinear.h"
#include "ipc/ipc.h"
#include "smooth/smooth.h"
#include "penalty/penalty.h"
#include "scene/scene.h"
#include "sim/sim.h"
#include "output/output.h"
#include "check/check.h"
#endif
