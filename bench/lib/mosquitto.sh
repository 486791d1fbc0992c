# Sourced by the bench scripts that start their own Mosquitto on loopback.

# The first port from $1 on that nothing listens on.
free_port() {
  local port=$1
  while ss -ltnH "sport = :$port" | grep -q .; do port=$((port + 1)); done
  echo "$port"
}

# The fleet benches' broker on 127.0.0.1:$1: no connection, in-flight or
# queue limit the fleet could hit before the runner does, Nagle off, no log.
fleet_mosquitto_conf() {
  cat <<CONF
listener $1 127.0.0.1
allow_anonymous true
persistence false
max_connections -1
max_inflight_messages 0
max_queued_messages 100000
set_tcp_nodelay true
log_dest none
CONF
}
