/* format1.h: which caliber wrote format 1 seals (SHA256SUMS without SEAL),
 * so that verify can tell a run sealed before SEAL existed from a format 2
 * run whose SEAL was deleted with its line (docs/formats.md, "Seal"). */
#ifndef CB_FORMAT1_H
#define CB_FORMAT1_H

/* 1 when commit (as run.json records caliber_commit: 40 hex digits, with
 * "+dirty" for a build with local changes) is a caliber from before SEAL,
 * which sealed in format 1; 0 for any other, an unknown build included:
 * every caliber since seals in format 2. */
int cb_commit_seals_format1(const char *commit);

#endif
