/* home.h: where caliber's own tree (the harness: backends/, python/,
 * the demo compiler) is, found once from $CALIBER_HOME or the running
 * binary; plans, pins, preflights and workers all look there. */
#ifndef CB_HOME_H
#define CB_HOME_H

/* caliber's own tree (the harness): $CALIBER_HOME, else the nearest folder
 * above the running binary that holds backends/ and python/caliber_pytest,
 * itself or as its share/caliber (an installed prefix), else ".". */
const char *cb_home(void);

/* Whether cb_home() found such a tree (or was told by CALIBER_HOME). */
int cb_home_found(void);

#endif
