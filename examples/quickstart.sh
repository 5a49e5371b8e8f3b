#!/usr/bin/env bash
# quickstart.sh walks the README's quickstart from start to end and fails,
# with landlord serve's log, at the first step that does not do what the
# README says. It builds a static landlord and the demo image (no registry
# needed), starts landlord serve on a free port with a database of its own
# (the binary just built, as `go run ./cmd/landlord serve` would run), creates
# acme on a pinned host port and reads its page with curl, creates beta, gets
# and lists, sets acme and reads its page again, shows acme's history,
# deletes beta, shows the provider's schema, then starts over as the README
# says: deletes acme and stops landlord with Ctrl-C's signal. It needs bash,
# go, curl and a Docker Engine.
#
#   examples/quickstart.sh
#
# The environment may set:
#   QUICKSTART_IMAGE      the demo image's tag (default landlord.local/demo:local)
#   QUICKSTART_HOST_PORT  acme's host port (default a free one from 18000 to 18999)
#   LANDLORD_CONFIG       a landlord.yaml for landlord serve (default none)
#   QUICKSTART_KEEP=1     keep the work directory: landlord, its database, its log
#
# examples/examples_test.go runs it (go test ./examples).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
image=${QUICKSTART_IMAGE:-landlord.local/demo:local}
work=$(mktemp -d "${TMPDIR:-/tmp}/landlord-quickstart.XXXXXX")
# The quickstart's own server and none of the caller's: no address, token,
# database or provider from the environment.
unset LANDLORD_ADDR LANDLORD_TOKEN LANDLORD_LISTEN LANDLORD_DATABASE LANDLORD_PROVIDER \
	LANDLORD_ADMIN_TOKEN LANDLORD_READER_TOKEN LANDLORD_INSECURE

step() { printf '\n== %s\n' "$*"; }
fail() {
	printf '\nquickstart: FAILED: %s\n' "$*" >&2
	exit 1
}

serve_pid=
cleanup() {
	local status=$?
	if [[ -n $serve_pid ]] && kill -0 "$serve_pid" 2>/dev/null; then
		# A step failed while landlord ran: remove the tenants' containers
		# and networks through it (once its address is known: never through
		# another landlord), then stop it.
		if [[ -n ${LANDLORD_ADDR:-} ]]; then
			for t in acme beta; do
				"$work/landlord" delete "$t" --wait --timeout 60s >/dev/null 2>&1 || true
			done
		fi
		kill -INT "$serve_pid" 2>/dev/null || true
		wait "$serve_pid" 2>/dev/null || true
	fi
	if ((status != 0)) && [[ -f $work/serve.log ]]; then
		printf '\n--- landlord serve log (its last 40 lines)\n' >&2
		tail -n 40 "$work/serve.log" >&2
	fi
	if [[ ${QUICKSTART_KEEP:-} == 1 ]]; then
		echo "quickstart: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# free_port prints a port from 18000 to 18999 nothing answers on.
free_port() {
	local p
	for p in $(shuf -i 18000-18999 2>/dev/null || seq 18000 18999); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	fail "no free port from 18000 to 18999"
}
host_port=${QUICKSTART_HOST_PORT:-$(free_port)}

# has checks that what a step printed holds want.
has() {
	local what=$1 got=$2 want=$3
	[[ $got == *"$want"* ]] || fail "$what does not show \"$want\""
}

# page reads acme's page, trying again for 10 s while its new container
# starts (curl's --retry does not retry a connection reset).
page() {
	local i
	for i in $(seq 1 20); do
		if curl -fsS --max-time 5 "http://127.0.0.1:$host_port/" 2>"$work/curl.err"; then
			return
		fi
		sleep 0.5
	done
	fail "curl http://127.0.0.1:$host_port/: $(cat "$work/curl.err")"
}

acme() { # acme's config: the demo image with args, on the pinned host port
	printf '{"image":"%s","args":[%s],"ports":[{"container_port":8080,"host_port":%s}]}' "$image" "$1" "$host_port"
}

step "CGO_ENABLED=0 go build -o landlord ./cmd/landlord"
(cd "$repo" && CGO_ENABLED=0 go build -o "$work/landlord" ./cmd/landlord)
cd "$work"

step "./landlord demo image"
./landlord demo image --tag "$image"

step "landlord serve (database $work/landlord.db, a free port)"
./landlord serve --listen 127.0.0.1:0 --database "$work/landlord.db" >"$work/serve.log" 2>&1 &
serve_pid=$!
addr=
for _ in $(seq 1 150); do
	addr=$(grep -o '"address":"http://[^"]*"' "$work/serve.log" | head -n 1 | cut -d '"' -f 4) || true
	[[ -n $addr ]] && break
	kill -0 "$serve_pid" 2>/dev/null || fail "landlord serve exited at start-up"
	sleep 0.1
done
[[ -n $addr ]] || fail "landlord serve did not start within 15 s"
grep -q '"providers":"docker"' "$work/serve.log" ||
	fail "landlord serve did not enable the docker provider: no Docker Engine answered?"
export LANDLORD_ADDR=$addr
echo "landlord serves on $addr with the docker provider"

step "./landlord create acme --config '$(acme '"acme"')' --wait"
out=$(./landlord create acme --config "$(acme '"acme"')" --wait --timeout 2m)
echo "$out"
has "create acme" "$out" "Status:      ready"
has "create acme" "$out" "127.0.0.1:$host_port"

step "curl http://127.0.0.1:$host_port/"
out=$(page)
echo "$out"
has "acme's page" "$out" "landlord demo: tenant acme"

step "./landlord create beta --config 'image: $image' --label tier=gold --wait"
out=$(./landlord create beta --config "image: $image" --label tier=gold --wait --timeout 2m)
echo "$out"
has "create beta" "$out" "Status:      ready"

step "./landlord get acme"
out=$(./landlord get acme)
echo "$out"
has "get acme" "$out" "app 8080/tcp → 127.0.0.1:$host_port"

step "./landlord list"
out=$(./landlord list)
echo "$out"
has "list" "$out" "ENDPOINTS"
[[ $(grep '^acme ' <<<"$out") == *"ready"*"127.0.0.1:$host_port"* ]] || fail "list does not show acme ready on 127.0.0.1:$host_port"
[[ $(grep '^beta ' <<<"$out") == *"ready"* ]] || fail "list does not show beta ready"

step "./landlord set acme --config '$(acme '"acme","--tier","gold"')' --wait"
out=$(./landlord set acme --config "$(acme '"acme","--tier","gold"')" --wait --timeout 2m)
echo "$out"
has "set acme" "$out" "Generation:  2 (observed 2)"
has "set acme" "$out" "127.0.0.1:$host_port"
out=$(page)
echo "$out"
has "acme's page after set" "$out" "args:     --tier gold"

step "./landlord history acme"
out=$(./landlord history acme)
echo "$out"
has "history acme" "$out" "updated"
has "history acme" "$out" "updating → ready"

step "./landlord delete beta --wait"
out=$(./landlord delete beta --wait --timeout 2m)
echo "$out"
has "delete beta" "$out" "tenant beta deleted"

step "./landlord compute"
out=$(./landlord compute)
echo "$out" | head -n 5
has "compute" "$out" "Provider: docker"

step "start over: ./landlord delete acme --wait, then Ctrl-C (SIGINT) landlord serve"
./landlord delete acme --wait --timeout 2m
if curl -fsS --max-time 2 "http://127.0.0.1:$host_port/" >/dev/null 2>&1; then
	fail "acme's page still answers after its deletion"
fi
kill -INT "$serve_pid"
wait "$serve_pid" || fail "landlord serve exited $? on SIGINT, not 0"
serve_pid=
grep -q '"msg":"landlord stopped"' "$work/serve.log" || fail "landlord serve did not log that it stopped"
echo "landlord stopped"

printf '\nquickstart: every step did what the README says\n'
