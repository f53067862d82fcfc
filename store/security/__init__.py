"""Who may do what, and what is sealed where: every sealed column (`sealed`) and key
rotation (`rotate`), attestations of decisions and answers (`attest`), the operator API's
tokens (`principals`) and the sign-in codec's sessions (`codec_sessions`). The AEAD itself
is the database layer's (store/db/sealing.py): every store context carries its sealer."""
