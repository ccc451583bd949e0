// owns: the local provider's portal page: a form marked data-confirm (cancel) is sent only once confirmed.
for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  });
}
