/**
 * `install.sh`: a POSIX shell script that downloads the client's tarball from
 * this service, checks its SHA-256 against the digest written into the script,
 * unpacks it under `~/.service-proxy-cli/<version>` and links the command into
 * `~/.local/bin`. Every value put into the script is single-quoted for the
 * shell, and the API root must parse as an http(s) URL first: the root can come
 * from a request's Host header, which a caller chooses.
 */
import { CLI_NAME, type CliPackage } from './package-builder.js';

/** `'...'` for sh: the only character a single-quoted string cannot hold is `'` itself */
const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

/** the API root as a clean `http(s)://host[:port][/prefix]/api/v1`, or null when it is not one */
export function cleanApiRoot(candidate: string): string | null {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    return null;
  }
  // WHATWG URLs accept quotes, `;` and `$` in a host: keep DNS names and IP literals only
  if (!/^(?:[a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname)) return null;
  return url.href.replace(/\/+$/, '');
}

export function installScript(apiRoot: string, cli: CliPackage): string {
  const values = [
    `API_ROOT=${shellQuote(apiRoot)}`,
    `VERSION=${shellQuote(cli.version)}`,
    `FILE=${shellQuote(cli.fileName)}`,
    `SHA256=${shellQuote(cli.sha256)}`,
  ].join('\n');
  return `#!/bin/sh
# Installs ${CLI_NAME} from the service that served this script.
#   curl -fsSL <api root>/cli/install.sh | sh
# SERVICE_PROXY_CLI_HOME (default ~/.service-proxy-cli) holds the versions,
# SERVICE_PROXY_CLI_BIN_DIR (default ~/.local/bin) gets the command.
set -eu
${values}
HOME_DIR="\${SERVICE_PROXY_CLI_HOME:-\$HOME/.service-proxy-cli}"
BIN_DIR="\${SERVICE_PROXY_CLI_BIN_DIR:-\$HOME/.local/bin}"

fail() { echo "${CLI_NAME} install: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || fail "Node.js 20.19 or later is required (node not found)"
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \\
  || fail "Node.js 20.19 or later is required (found $(node --version))"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM

if command -v curl >/dev/null 2>&1; then
  curl -fsSL -o "$WORK/$FILE" "$API_ROOT/cli/$FILE" || fail "download of $API_ROOT/cli/$FILE failed"
elif command -v wget >/dev/null 2>&1; then
  wget -q -O "$WORK/$FILE" "$API_ROOT/cli/$FILE" || fail "download of $API_ROOT/cli/$FILE failed"
else
  fail "curl or wget is required"
fi

if command -v sha256sum >/dev/null 2>&1; then
  GOT=$(sha256sum "$WORK/$FILE" | cut -d ' ' -f 1)
elif command -v shasum >/dev/null 2>&1; then
  GOT=$(shasum -a 256 "$WORK/$FILE" | cut -d ' ' -f 1)
else
  GOT=$(node -e 'const h = require("crypto").createHash("sha256"); h.update(require("fs").readFileSync(process.argv[1])); console.log(h.digest("hex"))' "$WORK/$FILE")
fi
[ "$GOT" = "$SHA256" ] || fail "checksum mismatch for $FILE: expected $SHA256, got $GOT (nothing installed)"

mkdir -p "$WORK/unpacked"
tar -xzf "$WORK/$FILE" -C "$WORK/unpacked"
mkdir -p "$HOME_DIR" "$BIN_DIR"
rm -rf "$HOME_DIR/$VERSION"
mv "$WORK/unpacked/package" "$HOME_DIR/$VERSION"
chmod 755 "$HOME_DIR/$VERSION/bin/${CLI_NAME}.mjs"
ln -sfn "$HOME_DIR/$VERSION/bin/${CLI_NAME}.mjs" "$BIN_DIR/${CLI_NAME}"

echo "installed ${CLI_NAME} $VERSION in $HOME_DIR/$VERSION, command $BIN_DIR/${CLI_NAME}"
case ":\${PATH}:" in *":$BIN_DIR:"*) ;; *) echo "add $BIN_DIR to PATH to run it by name" ;; esac
echo "then: export SERVICE_API_URL=$API_ROOT SERVICE_TOKEN=<a pipeline or API token>"
`;
}
