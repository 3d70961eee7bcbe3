// Focus for panels that open in place (forms, role lists): the opener gets
// focus back when the panel closes, so keyboard users keep their place.

/** Remembers the focused element; the returned function focuses it again if it is still on the page. */
export function rememberFocus(): () => void {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  return () => {
    // After the panel has left the DOM.
    setTimeout(() => {
      if (opener?.isConnected) opener.focus();
    });
  };
}
