/* knead/sim — (being written) */
#ifndef KNEAD_SIM_H
#define KNEAD_SIM_H
#endif
