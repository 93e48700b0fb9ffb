# The in-cluster image (deploy/): the static kubectl-homelab_lint of a
# release archive on an empty base, so nothing is pulled to build it.
# Build context: the directory scripts/image stages (the binary, LICENSE,
# an empty tmp/ and the CA certificates of the build machine, for https to the
# Pushgateway and probe targets signed by a public CA).
#   scripts/image --binary target/.../kubectl-homelab_lint
FROM scratch
COPY LICENSE /LICENSE
# An empty /tmp (scratch has none), the non-root user's: --example and
# temporary files go there (deploy/ mounts an emptyDir over it).
COPY --chown=65532:65532 --chmod=1777 tmp /tmp
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY kubectl-homelab_lint /usr/local/bin/kubectl-homelab_lint
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
# Numeric, so no /etc/passwd is needed; matches deploy/base/cronjob.yaml.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kubectl-homelab_lint"]
