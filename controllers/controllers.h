/* knead/controllers — (being written) */
#ifndef KNEAD_CONTROLLERS_H
#define KNEAD_CONTROLLERS_H
#endif
