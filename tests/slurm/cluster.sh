#!/bin/sh
# tests/slurm/cluster.sh start DIR | stop DIR: a one-node Slurm cluster on
# this machine, for tests/slurm/run.sh. Everything lives under DIR: the
# configuration (SLURM_CONF=DIR/slurm.conf), the state and spool folders,
# the logs, and a private MariaDB for slurmdbd (sacct reads the accounting
# from there). The node offers its CPUs, no GPU. Daemons run as root and
# are stopped by their pid files. Needs Debian's slurm-wlm, slurmdbd, munge
# and mariadb-server (scripts/deps.sh --ci installs them).
set -eu
cmd=${1:?usage: cluster.sh start|stop DIR}
dir=${2:?usage: cluster.sh start|stop DIR}
host=$(hostname -s)
cpus=$(nproc)
# Ports of this cluster's daemons (the defaults plus 1000, to keep clear of a
# Slurm or MariaDB the machine may run itself).
db_port=4306; dbd_port=7819; ctld_port=7817; d_port=7818

# wait_for WHAT TRIES CMD...: run CMD until it succeeds, at most TRIES times
# 0.2 s apart; on failure show the logs.
wait_for() {
	what=$1; tries=$2; shift 2
	n=0
	until timeout 10 "$@" >/dev/null 2>&1; do
		n=$((n + 1))
		if [ "$n" -ge "$tries" ]; then
			echo "cluster: $what did not come up" >&2
			tail -n 20 "$dir"/log/*.log >&2 2>/dev/null || true
			return 1
		fi
		sleep 0.2
	done
}

stop_pid() {
	f=$1
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill "$pid" 2>/dev/null || true
	n=0
	while kill -0 "$pid" 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$f"
}

case "$cmd" in
start)
	mkdir -p "$dir/log" "$dir/state" "$dir/spool" "$dir/run" "$dir/munge"
	# munged runs as munge and keeps its key and log in DIR/munge: DIR (and
	# the folders above it) must let it pass
	chmod 711 "$dir"
	# munge: a key of its own, on the default socket (Slurm's clients look
	# for it there); a munged already serving the machine is used as it is
	if ! timeout 5 munge -n </dev/null >/dev/null 2>&1; then
		dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
		mkdir -p /run/munge
		chown munge:munge "$dir/munge" "$dir/munge/munge.key" /run/munge
		chmod 700 "$dir/munge"; chmod 400 "$dir/munge/munge.key"
		runuser -u munge -- /usr/sbin/munged --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
			--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed"
		cp "$dir/munge/munged.pid" "$dir/run/munged.pid"
	fi
	# MariaDB for slurmdbd, on 127.0.0.1 only
	mariadb-install-db --datadir="$dir/db" --user=root --auth-root-authentication-method=normal --skip-test-db \
		>"$dir/log/mariadb-install.log" 2>&1
	mariadbd --no-defaults --datadir="$dir/db" --user=root --bind-address=127.0.0.1 --port=$db_port \
		--socket="$dir/run/mariadb.sock" --pid-file="$dir/run/mariadb.pid" --log-error="$dir/log/mariadb.log" \
		--skip-log-bin >/dev/null 2>&1 &
	wait_for mariadb 150 mariadb --no-defaults --socket="$dir/run/mariadb.sock" -u root -e 'select 1'
	cat >"$dir/slurmdbd.conf" <<-CONF
	AuthType=auth/munge
	DbdHost=localhost
	DbdPort=$dbd_port
	SlurmUser=root
	LogFile=$dir/log/slurmdbd.log
	PidFile=$dir/run/slurmdbd.pid
	StorageType=accounting_storage/mysql
	StorageHost=127.0.0.1
	StoragePort=$db_port
	StorageUser=root
	StorageLoc=slurm_acct_db
	CONF
	chmod 600 "$dir/slurmdbd.conf"
	cat >"$dir/slurm.conf" <<-CONF
	ClusterName=caliber
	SlurmctldHost=$host
	SlurmctldPort=$ctld_port
	SlurmdPort=$d_port
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	StateSaveLocation=$dir/state
	SlurmdSpoolDir=$dir/spool/%n
	SlurmctldPidFile=$dir/run/slurmctld.pid
	SlurmdPidFile=$dir/run/slurmd.pid
	SlurmctldLogFile=$dir/log/slurmctld.log
	SlurmdLogFile=$dir/log/slurmd.log
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	MpiDefault=none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_CPU
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/slurmdbd
	AccountingStorageHost=localhost
	AccountingStoragePort=$dbd_port
	ReturnToService=2
	SchedulerType=sched/backfill
	SchedulerParameters=sched_interval=1
	MinJobAge=300
	NodeName=$host CPUs=$cpus State=UNKNOWN
	PartitionName=caliber Nodes=$host Default=YES MaxTime=INFINITE State=UP
	CONF
	# slurmdbd reads the slurmdbd.conf beside SLURM_CONF
	export SLURM_CONF="$dir/slurm.conf"
	slurmdbd
	wait_for slurmdbd 150 sacctmgr -i list cluster
	sacctmgr -i add cluster caliber >/dev/null
	slurmctld -f "$dir/slurm.conf"
	slurmd -f "$dir/slurm.conf"
	wait_for "the node" 150 sh -c "sinfo -h -N -o %T | grep -q idle"
	;;
stop)
	for d in slurmd slurmctld slurmdbd mariadb munged; do stop_pid "$dir/run/$d.pid"; done
	;;
*)
	echo "usage: cluster.sh start|stop DIR" >&2; exit 2 ;;
esac
